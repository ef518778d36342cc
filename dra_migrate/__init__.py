"""dra-migrate: move GPU workloads from device-plugin extended resources to DRA."""

__version__ = "0.1.0"
