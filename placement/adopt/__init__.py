"""Adopting a running cloud: its OpenStack Placement database."""
