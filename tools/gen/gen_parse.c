/* gen_parse.c — reads function signatures, the ICD dispatch table and
 * integral CL_* macros from the installed OpenCL headers with libclang. */
#include "tools/gen/gen.h"

#include <clang-c/Index.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *gen_cx(CXString s)
{
    char *r = gen_strdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

/* Object kind for an OpenCL handle type name, or NULL. */
static char *gen_handle_kind(const char *type)
{
    static const struct { const char *t, *k; } map[] = {
        {"cl_platform_id", "PLATFORM"}, {"cl_device_id", "DEVICE"},
        {"cl_context", "CONTEXT"}, {"cl_command_queue", "QUEUE"},
        {"cl_mem", "MEM"}, {"cl_program", "PROGRAM"}, {"cl_kernel", "KERNEL"},
        {"cl_event", "EVENT"}, {"cl_sampler", "SAMPLER"},
        {"cl_command_buffer_khr", "COMMAND_BUFFER"}, {"cl_semaphore_khr", "SEMAPHORE"},
        {"cl_mutable_command_khr", "MUTABLE_COMMAND"}, {"cl_accelerator_intel", "ACCELERATOR"},
    };
    char buf[256];
    const char *t = type;
    if (!strncmp(t, "const ", 6))
        t += 6;
    snprintf(buf, sizeof buf, "%s", t);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == ' '))
        buf[--n] = 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(buf, map[i].t))
            return gen_strdup(map[i].k);
    return NULL;
}

static const char *gen_file_of(CXCursor c, CXString *keep)
{
    CXFile f;
    clang_getSpellingLocation(clang_getCursorLocation(c), &f, NULL, NULL, NULL);
    *keep = clang_getFileName(f);
    return clang_getCString(*keep);
}

static void gen_add_func(gen_api *api, CXCursor c, const char *name)
{
    if (gen_find_func(api, name))
        return;
    if (api->nf >= GEN_MAX_FUNCS)
        gen_die("too many functions");
    gen_func *f = &api->f[api->nf++];
    memset(f, 0, sizeof *f);
    f->name = gen_strdup(name);
    CXType rt = clang_getCursorResultType(c);
    f->ret = gen_cx(clang_getTypeSpelling(rt));
    CXType crt = clang_getCanonicalType(rt);
    f->ret_void = crt.kind == CXType_Void;
    f->ret_handle = gen_handle_kind(f->ret);
    f->ret_is_ptr = crt.kind == CXType_Pointer && !f->ret_handle;
    f->ret_int = !f->ret_void && !f->ret_is_ptr && !f->ret_handle;
    int n = clang_Cursor_getNumArguments(c);
    if (n > GEN_MAX_PARAMS)
        gen_die("%s: too many parameters", name);
    f->np = n;
    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(c, i);
        gen_param *p = &f->p[i];
        CXType t = clang_getCursorType(a);
        CXType ct = clang_getCanonicalType(t);
        p->name = gen_cx(clang_getCursorSpelling(a));
        p->type = gen_cx(clang_getTypeSpelling(t));
        if (ct.kind == CXType_IncompleteArray || ct.kind == CXType_ConstantArray) {
            /* "T name[]" is a pointer parameter: declare it as "T *" */
            CXType et = clang_getArrayElementType(ct);
            char *es = gen_cx(clang_getTypeSpelling(et));
            free(p->type);
            p->type = malloc(strlen(es) + 3);
            sprintf(p->type, "%s *", es);
            free(es);
        }
        int is_array = ct.kind == CXType_IncompleteArray || ct.kind == CXType_ConstantArray;
        p->handle_kind = gen_handle_kind(p->type);
        if ((ct.kind == CXType_Pointer || is_array) && !p->handle_kind) {
            CXType pt = is_array ? clang_getArrayElementType(ct) : clang_getPointeeType(t);
            CXType cpt = clang_getCanonicalType(pt);
            p->is_fnptr = cpt.kind == CXType_FunctionProto || cpt.kind == CXType_FunctionNoProto;
            p->is_ptr = 1;
            p->pointee = gen_cx(clang_getTypeSpelling(pt));
            p->handle_kind = gen_handle_kind(p->pointee);
            p->elem_signed = cpt.kind == CXType_Int || cpt.kind == CXType_Long
                             || cpt.kind == CXType_LongLong || cpt.kind == CXType_Short;
        } else if (!p->handle_kind) {
            switch (ct.kind) {
            case CXType_Char_S: case CXType_SChar: case CXType_Short: case CXType_Int:
            case CXType_Long: case CXType_LongLong:
                p->is_signed = 1;
                break;
            case CXType_Float: case CXType_Double:
                p->is_float = 1;
                break;
            default:
                break;
            }
        }
        if (!p->name[0])
            gen_die("%s: parameter %d has no name", name, i);
    }
}

/* Integral macro: not function-like, tokens are integer literals,
 * punctuation, cl_* type names or other CL_ macros. */
static int gen_macro_integral(CXTranslationUnit tu, CXCursor c, const char *name)
{
    static const char *const reject[] = {"FLT", "DBL", "HUGE", "INFINITY", "NAN", "MAXFLOAT",
                                         "CL_M_", "CL_API", "CL_CALLBACK", "CL_EXT_",
                                         "CL_VERSION_", "CL_PROGRAM_STRING_DEBUG_INFO",
                                         "CL_HALF_", "CL_TARGET", "CL_USE_", "CL_HPP"};
    size_t nl = strlen(name);
    if (clang_Cursor_isMacroFunctionLike(c) || (nl > 2 && !strcmp(name + nl - 2, "_H")))
        return 0;   /* function-like macros, header guards */
    for (size_t i = 0; i < sizeof reject / sizeof reject[0]; i++)
        if (strstr(name, reject[i]))
            return 0;
    CXToken *toks;
    unsigned nt;
    clang_tokenize(tu, clang_getCursorExtent(c), &toks, &nt);
    int ok = nt >= 2;
    for (unsigned i = 1; ok && i < nt; i++) {
        CXString s = clang_getTokenSpelling(tu, toks[i]);
        const char *t = clang_getCString(s);
        switch (clang_getTokenKind(toks[i])) {
        case CXToken_Literal:
            ok = !strchr(t, '.') && t[0] != '"' && t[0] != '\'';
            break;
        case CXToken_Identifier:
            ok = !strncmp(t, "cl_", 3) || !strncmp(t, "CL_", 3);
            break;
        case CXToken_Punctuation:
            ok = 1;
            break;
        default:
            ok = 0;
        }
        clang_disposeString(s);
    }
    clang_disposeTokens(tu, toks, nt);
    return ok;
}

typedef struct gen_ctx { gen_api *api; CXTranslationUnit tu; } gen_ctx;

static enum CXChildVisitResult gen_visit_dispatch(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    gen_api *api = d;
    if (clang_getCursorKind(c) == CXCursor_FieldDecl && api->ndispatch < GEN_MAX_FUNCS)
        api->dispatch[api->ndispatch++] = gen_cx(clang_getCursorSpelling(c));
    return CXChildVisit_Continue;
}

static enum CXChildVisitResult gen_visit(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    gen_ctx *g = d;
    enum CXCursorKind k = clang_getCursorKind(c);
    if (k != CXCursor_FunctionDecl && k != CXCursor_MacroDefinition && k != CXCursor_StructDecl)
        return CXChildVisit_Continue;
    CXString fs;
    const char *file = gen_file_of(c, &fs);
    if (!file || !strstr(file, "/CL/")) {
        clang_disposeString(fs);
        return CXChildVisit_Continue;
    }
    CXString ns = clang_getCursorSpelling(c);
    const char *name = clang_getCString(ns);
    if (k == CXCursor_FunctionDecl && !strncmp(name, "cl", 2)) {
        gen_add_func(g->api, c, name);
    } else if (k == CXCursor_MacroDefinition && !strncmp(name, "CL_", 3)
               && (strstr(file, "/cl.h") || strstr(file, "/cl_ext.h"))) {
        if (g->api->nmacros < GEN_MAX_MACROS && gen_macro_integral(g->tu, c, name))
            g->api->macros[g->api->nmacros++] = gen_strdup(name);
    } else if (k == CXCursor_StructDecl && !strcmp(name, "_cl_icd_dispatch")
               && clang_isCursorDefinition(c)) {
        clang_visitChildren(c, gen_visit_dispatch, g->api);
    }
    clang_disposeString(ns);
    clang_disposeString(fs);
    return CXChildVisit_Continue;
}

int gen_parse_headers(gen_api *api, const char *tu_path, int argc, const char **argv)
{
    CXIndex idx = clang_createIndex(0, 1);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode err = clang_parseTranslationUnit2(idx, tu_path, argv, argc, NULL, 0,
                                                       CXTranslationUnit_DetailedPreprocessingRecord,
                                                       &tu);
    if (err != CXError_Success || !tu)
        gen_die("libclang could not parse %s (error %d)", tu_path, (int)err);
    unsigned nd = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < nd; i++) {
        CXDiagnostic dg = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error) {
            CXString s = clang_formatDiagnostic(dg, clang_defaultDiagnosticDisplayOptions());
            gen_die("%s", clang_getCString(s));
        }
        clang_disposeDiagnostic(dg);
    }
    gen_ctx g = {api, tu};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), gen_visit, &g);
    for (int i = 0; i < api->ndispatch; i++) {
        gen_func *f = gen_find_func(api, api->dispatch[i]);
        if (f)
            f->in_dispatch = 1;
    }
    clang_disposeTranslationUnit(tu);
    clang_disposeIndex(idx);
    if (api->ndispatch < 100)
        gen_die("struct _cl_icd_dispatch not found or too small (%d slots)", api->ndispatch);
    return 0;
}
