/* PMI-1, the process manager interface of MPICH-derived launchers, as libportals.so
 * provides it to the ranks that s4bxi-launch starts itself (spawn mode, docs/usage.md
 * "Bootstrapping raw Portals programs"). Elsewhere (command mode, or outside any run) every
 * PMI_* call goes to the next PMI library loaded, or fails with a message saying it is not
 * supported yet.
 *
 * Written from the public PMI-1 interface: the return codes, PMI_TRUE/PMI_FALSE and the
 * prototypes have MPICH's values and signatures, so a program compiled against another
 * PMI-1 header (MPICH's, Slurm's, the Portals 4 reference implementation's) links and
 * runs against ours unchanged. */
#ifndef S4BXI_PMI_H
#define S4BXI_PMI_H

#define PMI_SUCCESS 0
#define PMI_FAIL -1
#define PMI_ERR_INIT 1
#define PMI_ERR_NOMEM 2
#define PMI_ERR_INVALID_ARG 3
#define PMI_ERR_INVALID_KEY 4
#define PMI_ERR_INVALID_KEY_LENGTH 5
#define PMI_ERR_INVALID_VAL 6
#define PMI_ERR_INVALID_VAL_LENGTH 7
#define PMI_ERR_INVALID_LENGTH 8
#define PMI_ERR_INVALID_NUM_ARGS 9
#define PMI_ERR_INVALID_ARGS 10
#define PMI_ERR_INVALID_NUM_PARSED 11
#define PMI_ERR_INVALID_KEYVALP 12
#define PMI_ERR_INVALID_SIZE 13

typedef int PMI_BOOL;
#define PMI_TRUE 1
#define PMI_FALSE 0

typedef struct PMI_keyval_t {
    const char *key;
    char *val;
} PMI_keyval_t;

#ifdef __cplusplus
extern "C" {
#endif

/* Process group */
int PMI_Init(int *spawned);
int PMI_Initialized(PMI_BOOL *initialized);
int PMI_Finalize(void);
int PMI_Get_size(int *size);
int PMI_Get_rank(int *rank);
int PMI_Get_universe_size(int *size);
int PMI_Get_appnum(int *appnum);
int PMI_Barrier(void);
int PMI_Abort(int exit_code, const char error_msg[]);

/* The key-value space of the process group */
int PMI_KVS_Get_my_name(char kvsname[], int length);
int PMI_KVS_Get_name_length_max(int *length);
int PMI_KVS_Get_key_length_max(int *length);
int PMI_KVS_Get_value_length_max(int *length);
int PMI_KVS_Put(const char kvsname[], const char key[], const char value[]);
int PMI_KVS_Commit(const char kvsname[]);
int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length);

/* Node-local ranks, name publishing and dynamic processes: not supported by s4bxi yet
 * (they fail with a message), declared so that programs that merely link them build. */
int PMI_Get_clique_size(int *size);
int PMI_Get_clique_ranks(int ranks[], int length);
int PMI_Publish_name(const char service_name[], const char port[]);
int PMI_Unpublish_name(const char service_name[]);
int PMI_Lookup_name(const char service_name[], char port[]);
int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[], const int maxprocs[],
                       const int info_keyval_sizes[], const PMI_keyval_t *info_keyval_vectors[],
                       int preput_keyval_size, const PMI_keyval_t preput_keyval_vector[], int errors[]);

#ifdef __cplusplus
}
#endif

#endif /* S4BXI_PMI_H */
