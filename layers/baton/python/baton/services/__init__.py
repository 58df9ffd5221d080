"""Domain services: one per capability, all sharing `Core` (the ports and the common moves)."""
