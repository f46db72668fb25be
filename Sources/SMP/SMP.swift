// The SMP module. See README.md for the architecture.
