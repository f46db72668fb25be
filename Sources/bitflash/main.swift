// bitflash: flash BBC micro:bit and Calliope mini boards over Bluetooth LE.
import Commands

// `bitflash inspect FILE` runs at once, on this thread, and exits; every other command line is
// parsed and run with the concurrency runtime.
BitflashMain.runDirectly(.user)
await BitflashMain.main(.user)
