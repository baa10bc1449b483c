"""JSON Schemas as suites carry them: checked when read, bounded, validated offline (the json and tool_call rooms)."""
