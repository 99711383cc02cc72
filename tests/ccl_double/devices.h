/*
 * How many devices a runtime double (CUDA, XPU) pretends to have.
 */
#ifndef PD_TESTS_CCL_DOUBLE_DEVICES_H
#define PD_TESTS_CCL_DOUBLE_DEVICES_H

/* The entries of the list in visible_var (CUDA_VISIBLE_DEVICES; set but
 * blank: none), else the integer in forced_var (CUDA_DOUBLE_DEVICES,
 * 0..max), else dflt. Read on every call, so a test can change it; who
 * names the double in the message about a bad forced_var. */
int ccl_visible_devices(const char *visible_var, const char *forced_var,
                        int dflt, int max, const char *who);

#endif
