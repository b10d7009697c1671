"""Deployment and packaging: the commands as installed (--version, the
clash check, oslo.policy's tools), the systemd units and the services'
readiness notifications."""
