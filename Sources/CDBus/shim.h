#ifndef BITFLASH_CDBUS_SHIM_H
#define BITFLASH_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
