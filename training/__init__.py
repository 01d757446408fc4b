"""prsum's training data and the tools that check and use it (not part of the installed package)."""
