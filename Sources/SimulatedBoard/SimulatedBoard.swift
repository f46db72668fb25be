// The SimulatedBoard module. See README.md for the architecture.
