"""The host state source that reads Nova's API and cell databases."""
