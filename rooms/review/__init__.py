"""Proposals under review: revisions, the cards, the inbox, decisions, proposals as MCP tasks."""
