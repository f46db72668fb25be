// The McuMgr module. See README.md for the architecture.
