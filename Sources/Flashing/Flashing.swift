// The Flashing module. See README.md for the architecture.
