/* A PMI-1 client library over PMIx, as a cluster's libpmi would be, for raw Portals programs
 * run under `s4bxi-launch -- mpirun`. Where a PMI-1 library is loaded in a rank's process,
 * libportals.so leaves PMI-1 to it: each PMI_* call goes to the next definition loaded
 * (include/pmi.h, docs/usage.md "Bootstrapping raw Portals programs"); without one, the
 * simulation answers. Linked by tests/multihost's Portals programs, so that this path is
 * tested across machines too. Like any process manager's, it runs in real time, outside
 * the simulation.
 *
 * The key-value space is the job's PMIx namespace: PMI_KVS_Put is a global PMIx_Put,
 * PMI_KVS_Commit a PMIx_Commit, PMI_Barrier a PMIx_Fence that collects the data, and
 * PMI_KVS_Get looks the key up among every rank's data (PMI-1 does not say who put it). */
#include <pmi.h>
#include <pmix.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_BYTES (PMIX_MAX_NSLEN + 1)
#define KEY_MAX_BYTES 64
#define VALUE_MAX_BYTES 1024

static pmix_proc_t self;
static int initialized, size = -1;

static int job_size(void)
{
    pmix_proc_t job;
    pmix_value_t *value = NULL;
    PMIX_LOAD_PROCID(&job, self.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &value) != PMIX_SUCCESS || !value) return -1;
    int result = value->type == PMIX_UINT32 ? (int)value->data.uint32 : -1;
    PMIX_VALUE_RELEASE(value);
    return result;
}

int PMI_Init(int *spawned)
{
    if (initialized) return PMI_SUCCESS;
    pmix_status_t rc = PMIx_Init(&self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmi_over_pmix: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return PMI_FAIL;
    }
    size = job_size();
    if (size < 1) {
        fprintf(stderr, "pmi_over_pmix: the job's size is unknown to PMIx\n");
        return PMI_FAIL;
    }
    initialized = 1;
    if (spawned) *spawned = PMI_FALSE;
    return PMI_SUCCESS;
}

int PMI_Initialized(PMI_BOOL *out)
{
    if (!out) return PMI_ERR_INVALID_ARG;
    *out = initialized ? PMI_TRUE : PMI_FALSE;
    return PMI_SUCCESS;
}

int PMI_Finalize(void)
{
    if (!initialized) return PMI_ERR_INIT;
    initialized = 0;
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? PMI_SUCCESS : PMI_FAIL;
}

int PMI_Get_size(int *out)
{
    if (!initialized) return PMI_ERR_INIT;
    if (!out) return PMI_ERR_INVALID_ARG;
    *out = size;
    return PMI_SUCCESS;
}

int PMI_Get_rank(int *out)
{
    if (!initialized) return PMI_ERR_INIT;
    if (!out) return PMI_ERR_INVALID_ARG;
    *out = (int)self.rank;
    return PMI_SUCCESS;
}

int PMI_Get_universe_size(int *out)
{
    return PMI_Get_size(out);
}

int PMI_Get_appnum(int *out)
{
    if (!initialized) return PMI_ERR_INIT;
    if (!out) return PMI_ERR_INVALID_ARG;
    *out = 0;
    return PMI_SUCCESS;
}

int PMI_Barrier(void)
{
    if (!initialized) return PMI_ERR_INIT;
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) fprintf(stderr, "pmi_over_pmix: PMIx_Fence: %s\n", PMIx_Error_string(rc));
    return rc == PMIX_SUCCESS ? PMI_SUCCESS : PMI_FAIL;
}

int PMI_Abort(int exit_code, const char error_msg[])
{
    fprintf(stderr, "%s\n", error_msg ? error_msg : "PMI_Abort");
    PMIx_Abort(exit_code, error_msg, NULL, 0);
    return PMI_FAIL;
}

int PMI_KVS_Get_my_name(char kvsname[], int length)
{
    if (!initialized) return PMI_ERR_INIT;
    if (!kvsname || length <= 0) return PMI_ERR_INVALID_ARG;
    if (strlen(self.nspace) + 1 > (size_t)length) return PMI_ERR_INVALID_LENGTH;
    strcpy(kvsname, self.nspace);
    return PMI_SUCCESS;
}

int PMI_KVS_Get_name_length_max(int *length)
{
    if (!length) return PMI_ERR_INVALID_ARG;
    *length = NAME_MAX_BYTES;
    return PMI_SUCCESS;
}

int PMI_KVS_Get_key_length_max(int *length)
{
    if (!length) return PMI_ERR_INVALID_ARG;
    *length = KEY_MAX_BYTES;
    return PMI_SUCCESS;
}

int PMI_KVS_Get_value_length_max(int *length)
{
    if (!length) return PMI_ERR_INVALID_ARG;
    *length = VALUE_MAX_BYTES;
    return PMI_SUCCESS;
}

static int check_kvs(const char kvsname[], const char key[])
{
    if (!initialized) return PMI_ERR_INIT;
    if (!kvsname || strcmp(kvsname, self.nspace) != 0) return PMI_ERR_INVALID_ARG;
    if (!key || !*key) return PMI_ERR_INVALID_KEY;
    if (strlen(key) >= KEY_MAX_BYTES) return PMI_ERR_INVALID_KEY_LENGTH;
    return PMI_SUCCESS;
}

int PMI_KVS_Put(const char kvsname[], const char key[], const char value[])
{
    int rc = check_kvs(kvsname, key);
    if (rc != PMI_SUCCESS) return rc;
    if (!value) return PMI_ERR_INVALID_VAL;
    if (strlen(value) >= VALUE_MAX_BYTES) return PMI_ERR_INVALID_VAL_LENGTH;
    pmix_value_t put;
    PMIX_VALUE_CONSTRUCT(&put);
    put.type = PMIX_STRING;
    put.data.string = (char *)value; /* PMIx_Put copies it */
    return PMIx_Put(PMIX_GLOBAL, key, &put) == PMIX_SUCCESS ? PMI_SUCCESS : PMI_FAIL;
}

int PMI_KVS_Commit(const char kvsname[])
{
    if (!initialized) return PMI_ERR_INIT;
    if (!kvsname || strcmp(kvsname, self.nspace) != 0) return PMI_ERR_INVALID_ARG;
    return PMIx_Commit() == PMIX_SUCCESS ? PMI_SUCCESS : PMI_FAIL;
}

/* `key` as rank `rank` (or any rank: PMIX_RANK_UNDEF) put it, from what the last
 * PMI_Barrier collected: 1 if found and copied. */
static int lookup(pmix_rank_t rank, const char key[], char value[], int length, int *rc)
{
    pmix_proc_t proc;
    pmix_info_t optional;
    pmix_value_t *found = NULL;
    PMIX_LOAD_PROCID(&proc, self.nspace, rank);
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    pmix_status_t status = PMIx_Get(&proc, key, &optional, 1, &found);
    PMIX_INFO_DESTRUCT(&optional);
    if (status != PMIX_SUCCESS || !found) return 0;
    if (found->type != PMIX_STRING || !found->data.string) {
        PMIX_VALUE_RELEASE(found);
        return 0;
    }
    if (strlen(found->data.string) + 1 > (size_t)length) {
        *rc = PMI_ERR_INVALID_LENGTH;
    } else {
        strcpy(value, found->data.string);
        *rc = PMI_SUCCESS;
    }
    PMIX_VALUE_RELEASE(found);
    return 1;
}

int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length)
{
    int rc = check_kvs(kvsname, key);
    if (rc != PMI_SUCCESS) return rc;
    if (!value || length <= 0) return PMI_ERR_INVALID_ARG;
    if (lookup(PMIX_RANK_UNDEF, key, value, length, &rc)) return rc;
    for (int rank = 0; rank < size; ++rank)
        if (lookup((pmix_rank_t)rank, key, value, length, &rc)) return rc;
    return PMI_FAIL;
}

/* What PMI-1 has beyond the bootstrap: not needed by the programs run through it. */
static int unsupported(const char *name)
{
    fprintf(stderr, "pmi_over_pmix: %s is not provided\n", name);
    return PMI_FAIL;
}

int PMI_Get_clique_size(int *out)
{
    (void)out;
    return unsupported("PMI_Get_clique_size");
}

int PMI_Get_clique_ranks(int ranks[], int length)
{
    (void)ranks;
    (void)length;
    return unsupported("PMI_Get_clique_ranks");
}

int PMI_Publish_name(const char service_name[], const char port[])
{
    (void)service_name;
    (void)port;
    return unsupported("PMI_Publish_name");
}

int PMI_Unpublish_name(const char service_name[])
{
    (void)service_name;
    return unsupported("PMI_Unpublish_name");
}

int PMI_Lookup_name(const char service_name[], char port[])
{
    (void)service_name;
    (void)port;
    return unsupported("PMI_Lookup_name");
}

int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                       const int info_keyval_sizes[], const PMI_keyval_t *info_keyval_vectors[],
                       int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[], int errors[])
{
    (void)count, (void)cmds, (void)argvs, (void)maxprocs, (void)info_keyval_sizes, (void)info_keyval_vectors;
    (void)preput_keyval_size, (void)preput_keyval_vector, (void)errors;
    return unsupported("PMI_Spawn_multiple");
}
