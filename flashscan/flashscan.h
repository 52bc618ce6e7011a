/*-------------------------------------------------------------------------
 *
 * flashscan.h
 *	  Declarations shared by the flashscan module's files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLASHSCAN_H
#define FLASHSCAN_H

/* flashscan_scan.c */
extern bool flashscan_enable;
extern bool flashscan_selection_first;
extern void flashscan_scan_init(void);

#endif							/* FLASHSCAN_H */
