"""What each command prints: text, diffs, JSON, SARIF, GitHub annotations."""
