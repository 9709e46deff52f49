"""The host's SDK client for the Skills extension: one `SkillsClient` per connected server.

async with SkillsClient.connect("http://127.0.0.1:8000/mcp") as skills:
    listing = await skills.list_entries()
    data = await skills.read(listing.entries[0].uri)
"""

from skillwire.client.answers import DirectoryListingItem
from skillwire.client.listing import Listing
from skillwire.client.session import SkillsClient

__all__ = ["DirectoryListingItem", "Listing", "SkillsClient"]
