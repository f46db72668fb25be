#ifndef BITFLASH_CDBUS_SHIM_H
#define BITFLASH_CDBUS_SHIM_H
#include <dbus/dbus.h>
#include <dlfcn.h>
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

/* The binary does not link libdbus: `LibDBus` (module DBus) opens libdbus-1.so.3 the first time a
 * connection, message or name needs it, so that the commands that never talk to BlueZ do not load
 * it and the libraries it pulls in (libsystemd and what that links) at every start. The headers
 * give the types; these are the functions bitflash calls, without their `dbus_` prefix. */
#define CDBUS_FUNCTIONS(X) \
    X(threads_init_default) X(error_init) X(error_free) X(error_is_set) X(free) X(connection_open_private) \
    X(connection_set_exit_on_disconnect) X(connection_get_unix_fd) X(connection_close) X(connection_unref) \
    X(connection_get_is_connected) X(connection_has_messages_to_send) X(connection_can_send_type) \
    X(connection_send) X(connection_read_write) X(connection_pop_message) X(bus_register) X(bus_get_unique_name) \
    X(message_unref) X(message_new_method_call) X(message_new_signal) X(message_new_method_return) \
    X(message_new_error) X(message_set_destination) X(message_get_type) X(message_get_serial) \
    X(message_get_reply_serial) X(message_get_no_reply) X(message_get_sender) X(message_get_destination) \
    X(message_get_path) X(message_get_interface) X(message_get_member) X(message_get_error_name) \
    X(message_get_signature) X(message_contains_unix_fds) X(message_iter_init) X(message_iter_init_append) \
    X(message_iter_get_arg_type) X(message_iter_next) X(message_iter_recurse) X(message_iter_get_basic) \
    X(message_iter_get_fixed_array) X(message_iter_get_signature) X(message_iter_append_basic) \
    X(message_iter_append_fixed_array) X(message_iter_open_container) X(message_iter_close_container) \
    X(message_iter_abandon_container) X(validate_path) X(validate_interface) X(validate_member) \
    X(validate_bus_name) X(validate_error_name) X(signature_validate) X(signature_validate_single)

#define CDBUS_FIELD(f) __typeof__(dbus_##f) *f;
/* libdbus's entry points, resolved from the opened library. */
struct cdbus_api {
    CDBUS_FUNCTIONS(CDBUS_FIELD)
};
#undef CDBUS_FIELD

/* Resolves every entry point from `library` (a dlopen handle) into `api`. Returns NULL, or the
 * name of the first function the library does not export (a libdbus older than bitflash needs). */
static inline const char *cdbus_resolve(void *library, struct cdbus_api *api) {
#define CDBUS_RESOLVE(f) \
    if ((api->f = (__typeof__(dbus_##f) *)dlsym(library, "dbus_" #f)) == NULL) return "dbus_" #f;
    CDBUS_FUNCTIONS(CDBUS_RESOLVE)
#undef CDBUS_RESOLVE
    return NULL;
}

/* Wrappers that hide the pointer-to-pointer arguments of the string and fixed-array calls. */
static inline dbus_bool_t cdbus_append_string(const struct cdbus_api *api, DBusMessageIter *iter, int type,
                                              const char *value) {
    return api->message_iter_append_basic(iter, type, &value);
}

static inline dbus_bool_t cdbus_append_bytes(const struct cdbus_api *api, DBusMessageIter *array,
                                             const unsigned char *bytes, int count) {
    return api->message_iter_append_fixed_array(array, DBUS_TYPE_BYTE, &bytes, count);
}

static inline const unsigned char *cdbus_get_bytes(const struct cdbus_api *api, DBusMessageIter *array,
                                                   int *count) {
    const unsigned char *bytes = NULL;
    api->message_iter_get_fixed_array(array, &bytes, count);
    return bytes;
}

static inline const char *cdbus_get_string(const struct cdbus_api *api, DBusMessageIter *iter) {
    const char *value = NULL;
    api->message_iter_get_basic(iter, &value);
    return value;
}

/* True when the error is set; copies its name and message pointers (valid until dbus_error_free). */
static inline int cdbus_error_is_set(const struct cdbus_api *api, const DBusError *error) {
    return api->error_is_set(error);
}
/* A non-blocking eventfd that wakes the dispatch thread's poll. */
static inline int cdbus_make_wakeup_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
#endif
