// The LinkModel module. See README.md for the architecture.
