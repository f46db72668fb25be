/* Loads libdbus on first use and forwards each cdbus_<name> to its dbus_<name>. */
#include "CDBus.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cdbus_library_name = "libdbus-1.so.3";

/* The library's functions, found by dlsym. */
#define CDBUS_FUNCTION_FIELD(type, name, parameters, arguments) type(*name) parameters;
#define CDBUS_PROCEDURE_FIELD(name, parameters, arguments) void(*name) parameters;
struct cdbus_table {
    CDBUS_FUNCTIONS(CDBUS_FUNCTION_FIELD)
    CDBUS_PROCEDURES(CDBUS_PROCEDURE_FIELD)
};

static struct cdbus_table table;
static int loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Copies `text` into `reason`, cut to fit. */
static void say(char *reason, size_t capacity, const char *text) {
    if (capacity == 0) return;
    snprintf(reason, capacity, "%s", text ? text : "unknown error");
}

/* Opens `name` and fills `into` with every function; on failure closes it again and says why. */
static int open_library(const char *name, struct cdbus_table *into, void **handle, char *reason, size_t capacity) {
    *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (*handle == NULL) {
        say(reason, capacity, dlerror());
        return 0;
    }
    void *symbol;
#define CDBUS_FIND(field, symbol_name)                                                      \
    symbol = dlsym(*handle, symbol_name);                                                   \
    if (symbol == NULL) {                                                                   \
        snprintf(reason, capacity, "%s has no function %s", name, symbol_name);             \
        dlclose(*handle);                                                                   \
        *handle = NULL;                                                                     \
        return 0;                                                                           \
    }                                                                                       \
    memcpy(&into->field, &symbol, sizeof symbol);
#define CDBUS_FIND_FUNCTION(type, name, parameters, arguments) CDBUS_FIND(name, "dbus_" #name)
#define CDBUS_FIND_PROCEDURE(name, parameters, arguments) CDBUS_FIND(name, "dbus_" #name)
    CDBUS_FUNCTIONS(CDBUS_FIND_FUNCTION)
    CDBUS_PROCEDURES(CDBUS_FIND_PROCEDURE)
#undef CDBUS_FIND
    return 1;
}

static void load_once(void) {
    void *handle;
    /* Kept open for the life of the process: connections may outlive any caller. */
    int ok = open_library(cdbus_library_name, &table, &handle, failure, sizeof failure);
    __atomic_store_n(&loaded, ok, __ATOMIC_RELEASE);
}

int cdbus_load(void) {
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return 1;
    pthread_once(&once, load_once);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

const char *cdbus_load_failure(void) {
    return cdbus_load() ? "" : failure;
}

int cdbus_probe(const char *name, char *reason, size_t capacity) {
    struct cdbus_table scratch;
    void *handle;
    if (!open_library(name, &scratch, &handle, reason, capacity)) return 0;
    dlclose(handle);
    say(reason, capacity, "");
    return 1;
}

/* What a wrapper does when called although the library cannot be loaded (DBus checks
   cdbus_load before its first call, so this is a bug): say why and stop. */
static void require(void) {
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE) || cdbus_load()) return;
    fprintf(stderr, "bitflash: cannot load %s: %s\n", cdbus_library_name, failure);
    abort();
}

#define CDBUS_DEFINE_FUNCTION(type, name, parameters, arguments) \
    type cdbus_##name parameters {                                \
        require();                                                \
        return table.name arguments;                              \
    }
#define CDBUS_DEFINE_PROCEDURE(name, parameters, arguments) \
    void cdbus_##name parameters {                           \
        require();                                           \
        table.name arguments;                                \
    }
CDBUS_FUNCTIONS(CDBUS_DEFINE_FUNCTION)
CDBUS_PROCEDURES(CDBUS_DEFINE_PROCEDURE)
