"""A server whose skill is generated when it is read: `python examples/generated_skills.py` (stdio).

skills/list and skills/get give its entry with `"resources": "dynamic"`; resources/directory/read shows its files;
each resources/read runs the file's function again.
"""

from __future__ import annotations

import datetime

from mcp.server.mcpserver import MCPServer

from skillwire import GeneratedSkill, GeneratedSource, SkillService, SkillsExtension


def today_csv() -> str:
    """Runs on a worker thread at each read (it may block: query a database, call an API)."""
    return f"date,region,orders\n{datetime.date.today()},north,12\n"


daily = GeneratedSkill(
    "reports/daily",
    description="Assemble today's operational report from live data",
    instructions="# Daily report\n\nSummarise `data/today.csv` by region.\n",  # SKILL.md's body: text or a function
    files={"data/today.csv": today_csv},
)
mcp = MCPServer("reports")
SkillsExtension(SkillService(GeneratedSource([daily]))).install(mcp)

if __name__ == "__main__":
    mcp.run()
