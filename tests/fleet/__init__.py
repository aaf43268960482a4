"""The fleet commands over a real local Ray cluster (a package, so its conftest is not `conftest`)."""
