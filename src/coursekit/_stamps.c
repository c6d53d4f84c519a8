/* coursekit._stamps: the warm path's stamps, one `lstat` per path, in C.
 *
 * A warm check at 1,000 chapters compares ~28,000 stamps; in Python each costs ~2.5 us, of
 * which the system call is ~1.3 us and the rest building an `os.stat_result` and reading six
 * attributes of it. This module does the system calls and writes the six integers straight
 * into one bytes object, with the interpreter lock released, so that two threads share the
 * paths. It is optional: `coursekit.warm` computes the very same bytes in Python without it
 * (tests/test_warm_stamps.py holds the two equal).
 *
 * lstat_stamps(paths: bytes) -> bytes
 *     `paths` is the paths joined by NUL (b"" for none). For each path, six native int64
 *     values: st_mode, st_mtime_ns, st_ctime_ns, st_size, st_ino, st_dev (the last two as
 *     two's complement when past 2**63); six zeros for a path that does not exist (ENOENT,
 *     ENOTDIR). Any other error raises OSError naming the path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#define FIELDS 6

#if defined(__APPLE__)
#define MTIME(st) ((int64_t)(st).st_mtimespec.tv_sec * 1000000000 + (st).st_mtimespec.tv_nsec)
#define CTIME(st) ((int64_t)(st).st_ctimespec.tv_sec * 1000000000 + (st).st_ctimespec.tv_nsec)
#else
#define MTIME(st) ((int64_t)(st).st_mtim.tv_sec * 1000000000 + (st).st_mtim.tv_nsec)
#define CTIME(st) ((int64_t)(st).st_ctim.tv_sec * 1000000000 + (st).st_ctim.tv_nsec)
#endif

static PyObject *
lstat_stamps(PyObject *Py_UNUSED(module), PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "lstat_stamps() takes the paths as bytes");
        return NULL;
    }
    const char *joined = PyBytes_AS_STRING(arg);
    Py_ssize_t size = PyBytes_GET_SIZE(arg);
    Py_ssize_t count = 0;
    if (size > 0) {
        count = 1;
        for (const char *at = memchr(joined, 0, size); at != NULL;
             at = memchr(at + 1, 0, joined + size - at - 1)) {
            count++;
        }
    }
    if (count > PY_SSIZE_T_MAX / (FIELDS * (Py_ssize_t)sizeof(int64_t))) {
        return PyErr_NoMemory();
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, count * FIELDS * sizeof(int64_t));
    if (out == NULL) {
        return NULL;
    }
    int64_t *stamp = (int64_t *)PyBytes_AS_STRING(out);
    /* `joined` is NUL-terminated by the bytes object itself, so its last path is too */
    const char *path = joined;
    const char *failed = NULL;
    int error = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t n = 0; n < count; n++, stamp += FIELDS) {
        struct stat st;
        if (lstat(path, &st) == 0) {
            stamp[0] = (int64_t)st.st_mode;
            stamp[1] = MTIME(st);
            stamp[2] = CTIME(st);
            stamp[3] = (int64_t)st.st_size;
            stamp[4] = (int64_t)(uint64_t)st.st_ino;
            stamp[5] = (int64_t)(uint64_t)st.st_dev;
        }
        else if (errno == ENOENT || errno == ENOTDIR) {
            memset(stamp, 0, FIELDS * sizeof(int64_t));
        }
        else {
            error = errno;
            failed = path;
            break;
        }
        path += strlen(path) + 1;
    }
    Py_END_ALLOW_THREADS
    if (failed != NULL) {
        PyObject *name = PyBytes_FromString(failed);
        Py_DECREF(out);
        if (name != NULL) {
            errno = error;
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
            Py_DECREF(name);
        }
        return NULL;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"lstat_stamps", lstat_stamps, METH_O,
     "lstat_stamps(paths: bytes) -> bytes\n\nSix native int64 per NUL-separated path: mode, "
     "mtime_ns, ctime_ns, size, inode, device (zeros for a path that does not exist)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef stamps_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "coursekit._stamps",
    .m_doc = "The warm path's stamps in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__stamps(void)
{
    return PyModule_Create(&stamps_module);
}
