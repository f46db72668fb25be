import Diagnostics

/// `McuMgrError.isTransient` (a poor link, a busy or reset device) decides whether a message may
/// advise running the same command again.
extension McuMgrError: TransienceReporting {}
