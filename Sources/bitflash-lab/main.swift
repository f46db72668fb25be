// bitflash-lab: the laboratory (benchmarks, the fault campaign, traces, served simulated boards).
import Commands

BitflashMain.main(.lab)
