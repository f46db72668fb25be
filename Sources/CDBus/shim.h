#ifndef BITFLASH_CDBUS_SHIM_H
#define BITFLASH_CDBUS_SHIM_H
#include <dbus/dbus.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The DBUS_TYPE_* macros are casts like ((int) 's'), which the Clang importer skips. */
static const int CDBUS_TYPE_INVALID = DBUS_TYPE_INVALID;
static const int CDBUS_TYPE_BYTE = DBUS_TYPE_BYTE;
static const int CDBUS_TYPE_BOOLEAN = DBUS_TYPE_BOOLEAN;
static const int CDBUS_TYPE_INT16 = DBUS_TYPE_INT16;
static const int CDBUS_TYPE_UINT16 = DBUS_TYPE_UINT16;
static const int CDBUS_TYPE_INT32 = DBUS_TYPE_INT32;
static const int CDBUS_TYPE_UINT32 = DBUS_TYPE_UINT32;
static const int CDBUS_TYPE_INT64 = DBUS_TYPE_INT64;
static const int CDBUS_TYPE_UINT64 = DBUS_TYPE_UINT64;
static const int CDBUS_TYPE_DOUBLE = DBUS_TYPE_DOUBLE;
static const int CDBUS_TYPE_STRING = DBUS_TYPE_STRING;
static const int CDBUS_TYPE_OBJECT_PATH = DBUS_TYPE_OBJECT_PATH;
static const int CDBUS_TYPE_SIGNATURE = DBUS_TYPE_SIGNATURE;
static const int CDBUS_TYPE_UNIX_FD = DBUS_TYPE_UNIX_FD;
static const int CDBUS_TYPE_ARRAY = DBUS_TYPE_ARRAY;
static const int CDBUS_TYPE_VARIANT = DBUS_TYPE_VARIANT;
static const int CDBUS_TYPE_STRUCT = DBUS_TYPE_STRUCT;
static const int CDBUS_TYPE_DICT_ENTRY = DBUS_TYPE_DICT_ENTRY;

static const int CDBUS_MESSAGE_TYPE_METHOD_CALL = DBUS_MESSAGE_TYPE_METHOD_CALL;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = DBUS_MESSAGE_TYPE_METHOD_RETURN;
static const int CDBUS_MESSAGE_TYPE_ERROR = DBUS_MESSAGE_TYPE_ERROR;
static const int CDBUS_MESSAGE_TYPE_SIGNAL = DBUS_MESSAGE_TYPE_SIGNAL;

/* Wrappers that hide the pointer-to-pointer arguments of the string and fixed-array calls. */
static inline dbus_bool_t cdbus_append_string(DBusMessageIter *iter, int type, const char *value) {
    return dbus_message_iter_append_basic(iter, type, &value);
}

static inline dbus_bool_t cdbus_append_bytes(DBusMessageIter *array, const unsigned char *bytes, int count) {
    return dbus_message_iter_append_fixed_array(array, DBUS_TYPE_BYTE, &bytes, count);
}

static inline const unsigned char *cdbus_get_bytes(DBusMessageIter *array, int *count) {
    const unsigned char *bytes = NULL;
    dbus_message_iter_get_fixed_array(array, &bytes, count);
    return bytes;
}

static inline const char *cdbus_get_string(DBusMessageIter *iter) {
    const char *value = NULL;
    dbus_message_iter_get_basic(iter, &value);
    return value;
}

/* True when the error is set; copies its name and message pointers (valid until dbus_error_free). */
static inline int cdbus_error_is_set(const DBusError *error) {
    return dbus_error_is_set(error);
}
/* A non-blocking eventfd that wakes the dispatch thread's poll. */
static inline int cdbus_make_wakeup_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
#endif
