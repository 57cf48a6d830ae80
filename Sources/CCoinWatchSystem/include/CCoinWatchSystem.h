#ifndef CCOINWATCHSYSTEM_H
#define CCOINWATCHSYSTEM_H
int cw_sys_placeholder(void);
#endif
