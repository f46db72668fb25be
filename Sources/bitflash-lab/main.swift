// bitflash-lab: the laboratory (benchmarks, the fault campaign, traces, served simulated boards).
import Commands

await BitflashMain.main(.lab)
