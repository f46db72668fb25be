// The DBus module. See README.md for the architecture.
