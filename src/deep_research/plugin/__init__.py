"""Claude Code: the per-run state, the hook guard, the MCP gate and MCP fetch.

Imported lazily: the hook guard loads single modules of this wing and nothing else.
"""
