// The CBOR module. See README.md for the architecture.
