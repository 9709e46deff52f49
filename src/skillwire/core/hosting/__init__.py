"""The host's rules (pure): entries as a server lists them, verification, the registry, approvals, policy, the
acting window, pull rules. `skillwire.host` drives them over a connection; `client` and `cache` use them too.
"""
