/* PDMPI_STATS' report (service/stats_report.c). */
#ifndef PD_SERVICE_STATS_REPORT_H
#define PD_SERVICE_STATS_REPORT_H

/* At MPI_Finalize, on every rank (collective over MPI_COMM_WORLD):
 * rank 0 prints the table to stderr. */
void pd_stats_report(void);

#endif
