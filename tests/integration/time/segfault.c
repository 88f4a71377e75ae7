/* Dereferences NULL. The rank must die of SIGSEGV and the run report a backtrace that
 * names s4bxi_test_segfault_here.
 */
#include <stddef.h>

/* noipa: keeps the compiler from turning the NULL store into a trap instruction. */
__attribute__((noipa)) void s4bxi_test_segfault_here(volatile int* p)
{
    *p = 42;
}

int main(void)
{
    s4bxi_test_segfault_here(NULL);
    return 0;
}
