/* SPDX-License-Identifier: MIT */
/* uksfs front ends: what uks_server_stop() needs of each. */
#ifndef UKS_LIB_FS_SERVER_H
#define UKS_LIB_FS_SERVER_H

struct uks_server {
	void (*stop)(struct uks_server *srv);
};

#endif
