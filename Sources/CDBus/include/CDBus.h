#ifndef BITFLASH_CDBUS_H
#define BITFLASH_CDBUS_H
/*
 * libdbus, loaded when first used (dlopen of libdbus-1.so.3) instead of linked: a command that
 * never talks to a bus (inspect, convert, plan) then does not load libdbus, nor libsystemd and
 * the compression and crypto libraries it pulls in. Every libdbus function DBus calls is here as
 * cdbus_<name> (dbus_message_get_path is cdbus_message_get_path); the first one called loads the
 * library. Call cdbus_load() first and report its failure: a wrapper called when the library
 * cannot be loaded ends the process with that message.
 *
 * The types and constants are libdbus's own, written out here so that building needs no libdbus
 * headers: the D-Bus 1.x ABI keeps them (dbus-types.h, dbus-errors.h, dbus-message.h,
 * dbus-protocol.h).
 */
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef uint32_t dbus_bool_t;
typedef uint32_t dbus_uint32_t;
typedef struct DBusConnection DBusConnection;
typedef struct DBusMessage DBusMessage;

/* Stack storage for libdbus's message iterator; no public fields. */
typedef struct DBusMessageIter {
    void *dummy1;
    void *dummy2;
    dbus_uint32_t dummy3;
    int dummy4, dummy5, dummy6, dummy7, dummy8, dummy9, dummy10, dummy11;
    int pad1;
    void *pad2;
    void *pad3;
} DBusMessageIter;

/* An error: name and message are set (valid until cdbus_error_free) when it is set. */
typedef struct DBusError {
    const char *name;
    const char *message;
    unsigned int dummy1 : 1;
    unsigned int dummy2 : 1;
    unsigned int dummy3 : 1;
    unsigned int dummy4 : 1;
    unsigned int dummy5 : 1;
    void *padding1;
} DBusError;

/* A basic value as get_basic writes it: at most 8 bytes. */
typedef union DBusBasicValue {
    unsigned char bytes[8];
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    dbus_bool_t bool_val;
    int64_t i64;
    uint64_t u64;
    double dbl;
    unsigned char byt;
    char *str;
    int fd;
} DBusBasicValue;

/* Type codes: the characters of a signature. */
static const int CDBUS_TYPE_INVALID = 0;
static const int CDBUS_TYPE_BYTE = 'y';
static const int CDBUS_TYPE_BOOLEAN = 'b';
static const int CDBUS_TYPE_INT16 = 'n';
static const int CDBUS_TYPE_UINT16 = 'q';
static const int CDBUS_TYPE_INT32 = 'i';
static const int CDBUS_TYPE_UINT32 = 'u';
static const int CDBUS_TYPE_INT64 = 'x';
static const int CDBUS_TYPE_UINT64 = 't';
static const int CDBUS_TYPE_DOUBLE = 'd';
static const int CDBUS_TYPE_STRING = 's';
static const int CDBUS_TYPE_OBJECT_PATH = 'o';
static const int CDBUS_TYPE_SIGNATURE = 'g';
static const int CDBUS_TYPE_UNIX_FD = 'h';
static const int CDBUS_TYPE_ARRAY = 'a';
static const int CDBUS_TYPE_VARIANT = 'v';
static const int CDBUS_TYPE_STRUCT = 'r';
static const int CDBUS_TYPE_DICT_ENTRY = 'e';

static const int CDBUS_MESSAGE_TYPE_METHOD_CALL = 1;
static const int CDBUS_MESSAGE_TYPE_METHOD_RETURN = 2;
static const int CDBUS_MESSAGE_TYPE_ERROR = 3;
static const int CDBUS_MESSAGE_TYPE_SIGNAL = 4;

/* The file name the library is loaded by (its soname). */
extern const char *const cdbus_library_name;

/* Loads libdbus once; 1 when it is loaded, 0 when it cannot be (cdbus_load_failure says why). */
int cdbus_load(void);
/* Why cdbus_load failed: the loader's message, or the function the library lacks. */
const char *cdbus_load_failure(void);
/* Tries to load `name` and find every function, without keeping it: 1 when it would do, else 0
   with the reason in `reason` (at most `capacity` bytes, NUL-terminated). */
int cdbus_probe(const char *name, char *reason, size_t capacity);

/* X(return type, name without dbus_, parameters, arguments) for every function used. */
#define CDBUS_FUNCTIONS(X) \
    X(dbus_bool_t, threads_init_default, (void), ()) \
    X(dbus_bool_t, error_is_set, (const DBusError *e), (e)) \
    X(DBusConnection *, connection_open_private, (const char *address, DBusError *e), (address, e)) \
    X(dbus_bool_t, bus_register, (DBusConnection *c, DBusError *e), (c, e)) \
    X(const char *, bus_get_unique_name, (DBusConnection *c), (c)) \
    X(dbus_bool_t, connection_can_send_type, (DBusConnection *c, int type), (c, type)) \
    X(dbus_bool_t, connection_get_is_connected, (DBusConnection *c), (c)) \
    X(dbus_bool_t, connection_get_unix_fd, (DBusConnection *c, int *fd), (c, fd)) \
    X(dbus_bool_t, connection_has_messages_to_send, (DBusConnection *c), (c)) \
    X(DBusMessage *, connection_pop_message, (DBusConnection *c), (c)) \
    X(dbus_bool_t, connection_read_write, (DBusConnection *c, int ms), (c, ms)) \
    X(dbus_bool_t, connection_send, (DBusConnection *c, DBusMessage *m, dbus_uint32_t *serial), (c, m, serial)) \
    X(dbus_bool_t, message_contains_unix_fds, (DBusMessage *m), (m)) \
    X(const char *, message_get_destination, (DBusMessage *m), (m)) \
    X(const char *, message_get_error_name, (DBusMessage *m), (m)) \
    X(const char *, message_get_interface, (DBusMessage *m), (m)) \
    X(const char *, message_get_member, (DBusMessage *m), (m)) \
    X(dbus_bool_t, message_get_no_reply, (DBusMessage *m), (m)) \
    X(const char *, message_get_path, (DBusMessage *m), (m)) \
    X(dbus_uint32_t, message_get_reply_serial, (DBusMessage *m), (m)) \
    X(const char *, message_get_sender, (DBusMessage *m), (m)) \
    X(dbus_uint32_t, message_get_serial, (DBusMessage *m), (m)) \
    X(const char *, message_get_signature, (DBusMessage *m), (m)) \
    X(int, message_get_type, (DBusMessage *m), (m)) \
    X(dbus_bool_t, message_set_destination, (DBusMessage *m, const char *name), (m, name)) \
    X(DBusMessage *, message_new_error, (DBusMessage *to, const char *name, const char *text), (to, name, text)) \
    X(DBusMessage *, message_new_method_call, \
        (const char *bus, const char *path, const char *iface, const char *method), (bus, path, iface, method)) \
    X(DBusMessage *, message_new_method_return, (DBusMessage *call), (call)) \
    X(DBusMessage *, message_new_signal, (const char *path, const char *iface, const char *name), (path, iface, name)) \
    X(dbus_bool_t, message_iter_append_basic, (DBusMessageIter *i, int type, const void *value), (i, type, value)) \
    X(dbus_bool_t, message_iter_append_fixed_array, (DBusMessageIter *i, int type, const void *value, int n), \
        (i, type, value, n)) \
    X(dbus_bool_t, message_iter_close_container, (DBusMessageIter *i, DBusMessageIter *sub), (i, sub)) \
    X(int, message_iter_get_arg_type, (DBusMessageIter *i), (i)) \
    X(char *, message_iter_get_signature, (DBusMessageIter *i), (i)) \
    X(dbus_bool_t, message_iter_init, (DBusMessage *m, DBusMessageIter *i), (m, i)) \
    X(dbus_bool_t, message_iter_next, (DBusMessageIter *i), (i)) \
    X(dbus_bool_t, message_iter_open_container, \
        (DBusMessageIter *i, int type, const char *signature, DBusMessageIter *sub), (i, type, signature, sub)) \
    X(dbus_bool_t, signature_validate, (const char *signature, DBusError *e), (signature, e)) \
    X(dbus_bool_t, signature_validate_single, (const char *signature, DBusError *e), (signature, e)) \
    X(dbus_bool_t, validate_bus_name, (const char *name, DBusError *e), (name, e)) \
    X(dbus_bool_t, validate_error_name, (const char *name, DBusError *e), (name, e)) \
    X(dbus_bool_t, validate_interface, (const char *name, DBusError *e), (name, e)) \
    X(dbus_bool_t, validate_member, (const char *name, DBusError *e), (name, e)) \
    X(dbus_bool_t, validate_path, (const char *path, DBusError *e), (path, e))

/* The same for the functions that return nothing. */
#define CDBUS_PROCEDURES(X) \
    X(connection_close, (DBusConnection *c), (c)) \
    X(connection_set_exit_on_disconnect, (DBusConnection *c, dbus_bool_t exit), (c, exit)) \
    X(connection_unref, (DBusConnection *c), (c)) \
    X(error_free, (DBusError *e), (e)) \
    X(error_init, (DBusError *e), (e)) \
    X(free, (void *memory), (memory)) \
    X(message_unref, (DBusMessage *m), (m)) \
    X(message_iter_abandon_container, (DBusMessageIter *i, DBusMessageIter *sub), (i, sub)) \
    X(message_iter_get_basic, (DBusMessageIter *i, void *value), (i, value)) \
    X(message_iter_get_fixed_array, (DBusMessageIter *i, void *value, int *n), (i, value, n)) \
    X(message_iter_init_append, (DBusMessage *m, DBusMessageIter *i), (m, i)) \
    X(message_iter_recurse, (DBusMessageIter *i, DBusMessageIter *sub), (i, sub))

#define CDBUS_DECLARE_FUNCTION(type, name, parameters, arguments) type cdbus_##name parameters;
#define CDBUS_DECLARE_PROCEDURE(name, parameters, arguments) void cdbus_##name parameters;
CDBUS_FUNCTIONS(CDBUS_DECLARE_FUNCTION)
CDBUS_PROCEDURES(CDBUS_DECLARE_PROCEDURE)

/* Wrappers that hide the pointer-to-pointer arguments of the string and fixed-array calls. */
static inline dbus_bool_t cdbus_append_string(DBusMessageIter *iter, int type, const char *value) {
    return cdbus_message_iter_append_basic(iter, type, &value);
}

static inline dbus_bool_t cdbus_append_bytes(DBusMessageIter *array, const unsigned char *bytes, int count) {
    return cdbus_message_iter_append_fixed_array(array, CDBUS_TYPE_BYTE, &bytes, count);
}

static inline const unsigned char *cdbus_get_bytes(DBusMessageIter *array, int *count) {
    const unsigned char *bytes = NULL;
    cdbus_message_iter_get_fixed_array(array, &bytes, count);
    return bytes;
}

static inline const char *cdbus_get_string(DBusMessageIter *iter) {
    const char *value = NULL;
    cdbus_message_iter_get_basic(iter, &value);
    return value;
}

/* A non-blocking eventfd that wakes the dispatch thread's poll. */
static inline int cdbus_make_wakeup_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
#endif
