"""The host side: `Host` (`host.py`, its refusals and results in `results.py`) and the rules it applies.

The rules are pure (no I/O): entries, verification, registry, approvals, the acting window and security
policy. `Host` drives them over the SDK client (`skillwire.client`; one task per server in `connections.py`,
verified reads and what a failed one revokes in `reads.py`), the disk cache (`skillwire.cache`) and an approval
store (`approvals.JsonApprovalStore` writes one file); `prompt.TerminalPrompt` asks on a terminal and
`tools.skill_tools` hands a `Host` to a model. Import the public names from `skillwire`.
"""
