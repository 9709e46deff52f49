"""The host side: entries, verification, registry, approvals, the acting window and security policy.

Everything in this package is pure (no I/O); the SDK client, the disk cache and
the approval store are adapters around it (`skillwire.client`, `skillwire.cache`).
"""
