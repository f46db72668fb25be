// The BlueZTransport module. See README.md for the architecture.
