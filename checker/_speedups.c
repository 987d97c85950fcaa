/* checker._speedups: the lint's hottest loops, compiled. Optional: checker/native.py imports it when it was built
 * (hatch_build.py compiles it at install when a C compiler is there) and SSE_CHECK_PURE is not set; otherwise
 * the pure-Python code it mirrors runs, with the same results (tests/test_native.py compares them).
 *
 * long_digits(data)  mirrors checker/json_scan.py has_long_digits.
 * Matcher            mirrors the regex matcher of checker/run_match.py (a run template's bytes with holes),
 *                    without compiling a pattern per template (which cost a quarter of a long stream's lint).
 *
 * CPython C API only, no other dependency. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

#ifndef SPEEDUPS_SOURCE_SHA
#define SPEEDUPS_SOURCE_SHA ""
#endif

#define IS_DIGIT(c) ((unsigned char)((c) - '0') < 10)
/* JSON numbers the run takes: "0" or up to 15 digits without a leading zero (below 2^53, checker/run_match.py). */
#define MAX_NUMBER_DIGITS 15

/* -- long_digits ---------------------------------------------------------------------------------------- */

/* Whether data holds 16 ASCII digits in a row (necessary for an integer beyond 2^53). A run of 16 that
 * starts at i or later, up to i + 15, covers byte i + 15: when that byte is no digit, skip 16 bytes at once. */
static int
has_sixteen_digits(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i + 16 <= n) {
        if (!IS_DIGIT(p[i + 15])) {
            i += 16;
            continue;
        }
        Py_ssize_t start = i + 15; /* the run of digits that ends at i + 15 starts here */
        while (start > i && IS_DIGIT(p[start - 1]))
            start--;
        Py_ssize_t k = i + 16;
        while (k < n && k - start < 16 && IS_DIGIT(p[k]))
            k++;
        if (k - start >= 16)
            return 1;
        i = k + 1; /* p[k] is no digit (or the end): no run of 16 starts at or before it */
    }
    return 0;
}

static PyObject *
long_digits(PyObject *module, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    int found = has_sixteen_digits((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyBool_FromLong(found);
}

/* -- Matcher ---------------------------------------------------------------------------------------------- */

/* A run template (checker/run_template.py): literal bytes around holes. A text hole matches what the regex
 * [^"\\\x00-\x1f]* matches (a JSON string body without escapes or control characters: its quotes are in the
 * literals); a number hole what (0|[1-9][0-9]{0,14}) matches; a pinned hole is a text hole whose bytes must
 * then equal the template's. Each hole is followed by a literal whose first byte the hole cannot match (a
 * quote after a text, no digit after a number: checked by the constructor), so the regex never backtracks
 * into a hole and the greedy scan below finds the one match it finds. */
enum { HOLE_TEXT = 't', HOLE_PINNED = 'p', HOLE_NUMBER = 'n' };

typedef struct {
    PyObject_HEAD
    PyObject *literals; /* tuple of holes + 1 bytes */
    PyObject *pins;     /* tuple of holes: bytes for a pinned hole, None otherwise */
    PyObject *head;     /* bytes before literal 0 in an event on the wire: [event: NAME LF] "data: " */
    char kinds[64];
    Py_ssize_t holes;
    Py_ssize_t text;   /* the hole whose bytes are kept */
    Py_ssize_t number; /* the hole whose value must rise, or -1 */
    long long last;    /* the last number taken */
    char *texts;       /* the texts of the events taken since the last drain, joined */
    Py_ssize_t texts_len, texts_cap, count;
} Matcher;

/* Where the holes of one match are: [start, end) of each. */
typedef struct {
    Py_ssize_t start[64], end[64];
} Spans;

static int
literal_at(const char *s, Py_ssize_t at, Py_ssize_t end, PyObject *literal)
{
    Py_ssize_t n = PyBytes_GET_SIZE(literal);
    return end - at >= n && memcmp(s + at, PyBytes_AS_STRING(literal), (size_t)n) == 0;
}

/* The template's shape at s[pos:end): literal 0, then each hole and the literal after it. Returns where the
 * match stops (the end of the last literal) or -1. As the template's regex matches it: holes of any value. */
static Py_ssize_t
match_shape(Matcher *m, const char *s, Py_ssize_t pos, Py_ssize_t end, Spans *spans)
{
    PyObject **literals = &PyTuple_GET_ITEM(m->literals, 0);
    if (!literal_at(s, pos, end, literals[0]))
        return -1;
    Py_ssize_t at = pos + PyBytes_GET_SIZE(literals[0]);
    for (Py_ssize_t h = 0; h < m->holes; h++) {
        Py_ssize_t q = at;
        if (m->kinds[h] == HOLE_NUMBER) {
            if (q >= end || !IS_DIGIT(s[q]))
                return -1;
            if (s[q++] != '0')
                while (q < end && q - at < MAX_NUMBER_DIGITS && IS_DIGIT(s[q]))
                    q++;
        }
        else {
            unsigned char c;
            while (q < end && (c = (unsigned char)s[q]) >= 0x20 && c != '"' && c != '\\')
                q++;
        }
        spans->start[h] = at;
        spans->end[h] = q;
        if (!literal_at(s, q, end, literals[h + 1]))
            return -1;
        at = q + PyBytes_GET_SIZE(literals[h + 1]);
    }
    return at;
}

/* A shape match is taken when its pinned holes hold the template's bytes and its number rises: then its text
 * is kept and the number noted. 1 taken, 0 not (nothing changed), -1 out of memory. */
static int
take(Matcher *m, const char *s, const Spans *spans)
{
    for (Py_ssize_t h = 0; h < m->holes; h++) {
        if (m->kinds[h] != HOLE_PINNED)
            continue;
        PyObject *pin = PyTuple_GET_ITEM(m->pins, h);
        Py_ssize_t n = spans->end[h] - spans->start[h];
        if (n != PyBytes_GET_SIZE(pin) || memcmp(s + spans->start[h], PyBytes_AS_STRING(pin), (size_t)n) != 0)
            return 0;
    }
    long long value = 0;
    if (m->number >= 0) {
        for (Py_ssize_t i = spans->start[m->number]; i < spans->end[m->number]; i++)
            value = value * 10 + (s[i] - '0');
        if (value <= m->last)
            return 0;
    }
    Py_ssize_t n = spans->end[m->text] - spans->start[m->text];
    if (m->texts_len + n > m->texts_cap) {
        Py_ssize_t cap = (m->texts_cap + n) * 2;
        char *grown = PyMem_Realloc(m->texts, (size_t)cap);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->texts = grown;
        m->texts_cap = cap;
    }
    memcpy(m->texts + m->texts_len, s + spans->start[m->text], (size_t)n);
    m->texts_len += n;
    m->count++;
    if (m->number >= 0)
        m->last = value;
    return 1;
}

static int
Matcher_init(Matcher *m, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"literals", "kinds", "pins", "head", "text", "number", "last", NULL};
    PyObject *literals, *pins, *head;
    const char *kinds;
    Py_ssize_t kinds_len, text, number;
    long long last;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!y#O!O!nnL", names, &PyTuple_Type, &literals, &kinds,
                                     &kinds_len, &PyTuple_Type, &pins, &PyBytes_Type, &head, &text, &number,
                                     &last))
        return -1;
    if (kinds_len >= 64 || PyTuple_GET_SIZE(literals) != kinds_len + 1 || PyTuple_GET_SIZE(pins) != kinds_len
        || text < 0 || text >= kinds_len || number < -1 || number >= kinds_len) {
        PyErr_SetString(PyExc_ValueError, "Matcher: literals, kinds, pins, text and number do not agree");
        return -1;
    }
    for (Py_ssize_t i = 0; i <= kinds_len; i++) {
        PyObject *literal = PyTuple_GET_ITEM(literals, i);
        if (!PyBytes_CheckExact(literal)) {
            PyErr_SetString(PyExc_TypeError, "Matcher: literals must be bytes");
            return -1;
        }
        if (i == 0)
            continue;
        /* The byte after a hole must be one the hole cannot take (see the comment on the holes above). */
        char kind = kinds[i - 1];
        const char *lit = PyBytes_AS_STRING(literal);
        int stops = PyBytes_GET_SIZE(literal) > 0
                    && (kind == HOLE_NUMBER ? !IS_DIGIT(lit[0]) : (kind == HOLE_TEXT || kind == HOLE_PINNED)
                                                                      && lit[0] == '"');
        if (!stops) {
            PyErr_SetString(PyExc_ValueError, "Matcher: a hole is not followed by a byte that ends it");
            return -1;
        }
        PyObject *pin = PyTuple_GET_ITEM(pins, i - 1);
        if ((kind == HOLE_PINNED) != PyBytes_CheckExact(pin)) {
            PyErr_SetString(PyExc_ValueError, "Matcher: a pinned hole needs its bytes, another none");
            return -1;
        }
    }
    if (number >= 0 && kinds[number] != HOLE_NUMBER) {
        PyErr_SetString(PyExc_ValueError, "Matcher: the number is not a number hole");
        return -1;
    }
    if (kinds[text] == HOLE_NUMBER) {
        PyErr_SetString(PyExc_ValueError, "Matcher: the text is not a text hole");
        return -1;
    }
    Py_INCREF(literals);
    Py_INCREF(pins);
    Py_INCREF(head);
    Py_XSETREF(m->literals, literals);
    Py_XSETREF(m->pins, pins);
    Py_XSETREF(m->head, head);
    memcpy(m->kinds, kinds, (size_t)kinds_len);
    m->holes = kinds_len;
    m->text = text;
    m->number = number;
    m->last = last;
    m->texts_len = m->count = 0;
    return 0;
}

static void
Matcher_dealloc(Matcher *m)
{
    Py_XDECREF(m->literals);
    Py_XDECREF(m->pins);
    Py_XDECREF(m->head);
    PyMem_Free(m->texts);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static int
ready(Matcher *m)
{
    if (m->literals == NULL) {
        PyErr_SetString(PyExc_ValueError, "Matcher not initialised");
        return 0;
    }
    return 1;
}

/* shape(data) -> bool: data has the template's shape, the holes holding any value of their kind. */
static PyObject *
Matcher_shape(Matcher *m, PyObject *arg)
{
    Spans spans;
    if (!ready(m))
        return NULL;
    if (!PyBytes_Check(arg))
        return PyErr_Format(PyExc_TypeError, "shape() takes bytes, not %.100s", Py_TYPE(arg)->tp_name);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    return PyBool_FromLong(match_shape(m, PyBytes_AS_STRING(arg), 0, n, &spans) == n);
}

/* match(data) -> bool: one event's data, taken (its text kept) or not (nothing changes). */
static PyObject *
Matcher_match(Matcher *m, PyObject *arg)
{
    Spans spans;
    if (!ready(m))
        return NULL;
    if (!PyBytes_Check(arg))
        return PyErr_Format(PyExc_TypeError, "match() takes bytes, not %.100s", Py_TYPE(arg)->tp_name);
    const char *s = PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    if (match_shape(m, s, 0, n, &spans) != n)
        Py_RETURN_FALSE;
    int taken = take(m, s, &spans);
    if (taken < 0)
        return NULL;
    return PyBool_FromLong(taken);
}

/* A count or size from Python: one beyond a Py_ssize_t is as good as infinite here (a limit of 10**20 bytes or
 * events, which the pure-Python path takes as it is), one below zero as zero. -1 with an exception: not an int. */
static Py_ssize_t
as_size(PyObject *value)
{
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (n == -1 && PyErr_Occurred())
        return -1;
    if (overflow > 0 || n > PY_SSIZE_T_MAX)
        return PY_SSIZE_T_MAX;
    return overflow < 0 || n < 0 ? 0 : (Py_ssize_t)n;
}

/* wire(block, pos, fits, room) -> (end, count): the whole events of the run at block[pos:], each read as the
 * WHATWG parser reads "event: NAME" LF "data: DATA" LF LF (docs/spec.md §1: one space after the colon
 * removed, LF line ends, the empty line dispatching the event), each within ``fits`` bytes, at most ``room`` of
 * them, taken one after the other until one is not; where they end, and how many there were. The head (the
 * event line and "data: ") is the constructor's; the decoder calls this only at the start of an LF-only,
 * valid UTF-8 block (checker/sse.py). */
static PyObject *
Matcher_wire(Matcher *m, PyObject *const *args, Py_ssize_t nargs)
{
    Spans spans;
    if (!ready(m))
        return NULL;
    if (nargs != 4 || !PyBytes_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "wire(block: bytes, pos: int, fits: int, room: int)");
    Py_ssize_t pos = as_size(args[1]), fits = as_size(args[2]), room = as_size(args[3]);
    if (pos == -1 || fits == -1 || room == -1)
        return NULL;
    const char *s = PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), count = 0;
    const char *head = PyBytes_AS_STRING(m->head);
    Py_ssize_t head_len = PyBytes_GET_SIZE(m->head);
    while (pos < n && count < room) {
        Py_ssize_t end = fits < n - pos ? pos + fits : n;
        if (end - pos < head_len || memcmp(s + pos, head, (size_t)head_len) != 0)
            break;
        Py_ssize_t stop = match_shape(m, s, pos + head_len, end, &spans);
        if (stop < 0 || end - stop < 2 || s[stop] != '\n' || s[stop + 1] != '\n')
            break;
        int taken = take(m, s, &spans);
        if (taken < 0)
            return NULL;
        if (!taken)
            break;
        pos = stop + 2;
        count++;
    }
    return Py_BuildValue("(nn)", pos, count);
}

/* drain() -> (texts, count): the texts of the events taken since the last drain, joined, and their count. */
static PyObject *
Matcher_drain(Matcher *m, PyObject *Py_UNUSED(ignored))
{
    PyObject *texts = PyBytes_FromStringAndSize(m->texts, m->texts_len);
    if (texts == NULL)
        return NULL;
    PyObject *result = Py_BuildValue("(Nn)", texts, m->count);
    m->texts_len = m->count = 0;
    return result;
}

static PyMethodDef Matcher_methods[] = {
    {"shape", (PyCFunction)Matcher_shape, METH_O, "data has the template's shape (holes of any value)"},
    {"match", (PyCFunction)Matcher_match, METH_O, "take one event's data, or change nothing"},
    {"wire", (PyCFunction)(void (*)(void))Matcher_wire, METH_FASTCALL, "take whole events from a block"},
    {"drain", (PyCFunction)Matcher_drain, METH_NOARGS, "the texts taken since the last drain, and their count"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Matcher_members[] = {
    {"last", T_LONGLONG, offsetof(Matcher, last), READONLY, "the last number taken"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject MatcherType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "checker._speedups.Matcher",
    .tp_basicsize = sizeof(Matcher),
    .tp_dealloc = (destructor)Matcher_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A run template's bytes with holes (checker/run_match.py)",
    .tp_methods = Matcher_methods,
    .tp_members = Matcher_members,
    .tp_init = (initproc)Matcher_init,
    .tp_new = PyType_GenericNew,
};

/* -- the module ------------------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    {"long_digits", long_digits, METH_O, "whether data holds 16 ASCII digits in a row"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "checker._speedups", "sse-check's compiled hot path (checker/native.py)", -1,
    module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&MatcherType) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&MatcherType);
    if (PyModule_AddObject(mod, "Matcher", (PyObject *)&MatcherType) < 0
        || PyModule_AddStringConstant(mod, "SOURCE_SHA", SPEEDUPS_SOURCE_SHA) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
