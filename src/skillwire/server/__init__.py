"""The server side: the SDK extension that serves a skill source, and standalone runners."""
