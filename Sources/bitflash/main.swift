// bitflash: flash BBC micro:bit and Calliope mini boards over Bluetooth LE.
import Commands

await BitflashMain.main(.user)
