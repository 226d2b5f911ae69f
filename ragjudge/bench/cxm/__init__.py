"""CXMArena conversation-analytics tasks, one bench each (`cxm-intent`, `cxm-quality`, ...), each in its own folder
with the skeleton's parts (docs/extending.md); what they share is here.
"""
