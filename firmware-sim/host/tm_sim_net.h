/* tm_sim_net.h: `tm-sim --net`, the board on the network (host/tm_sim_net.c). */
#ifndef TM_SIM_NET_H
#define TM_SIM_NET_H

/* Runs the network board with tm-sim's command line; returns the exit status. */
int tm_sim_net_main(int argc, char **argv);

#endif
