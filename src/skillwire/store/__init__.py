"""Host-side persistence: approvals that outlive the process."""
