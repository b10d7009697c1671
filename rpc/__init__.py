"""The oslo.messaging scheduler service and its conductor client."""
