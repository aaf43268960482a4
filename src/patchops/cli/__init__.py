"""The terminal: typer commands, rendering, exit codes."""
