// The SampleFirmware module. See README.md for the architecture.
