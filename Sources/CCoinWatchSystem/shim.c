#include "CCoinWatchSystem.h"
int cw_sys_placeholder(void) { return 0; }
