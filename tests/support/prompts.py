"""A user for host tests against real servers: approves every skill load and nothing else."""

from __future__ import annotations

from skillwire.host.approvals import (
    CrossOriginReadRequest,
    ExecutionRequest,
    SkillApprovalDecision,
    SkillApprovalRequest,
)


class ApproveLoads:
    """Approves loading any skill (for this session, no permission fields); refuses execution and cross-origin reads."""

    async def approve_skill(self, request: SkillApprovalRequest) -> SkillApprovalDecision:
        return SkillApprovalDecision(approved=True, remember=False)

    async def approve_execution(self, request: ExecutionRequest) -> bool:
        return False

    async def approve_cross_origin_read(self, request: CrossOriginReadRequest) -> bool:
        return False
