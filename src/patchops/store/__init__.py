"""The store beside each copy (backups, journal, state, lock) and the one writer of user files."""
