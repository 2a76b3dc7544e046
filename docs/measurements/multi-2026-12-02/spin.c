/* Two threads against one: each thread runs the same loop of adds; the
 * ratio of the times says how many cores this process can have at once
 * (1.0: two, 2.0: one). cc -O1 -pthread spin.c -o spin */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static double now()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void *spin(void *a)
{
    volatile double x = 0;
    for (long i = 0; i < 300000000; i++)
        x += 1;
    return NULL;
}
int main()
{
    double t0 = now();
    spin(0);
    double t1 = now();
    pthread_t a, b;
    pthread_create(&a, 0, spin, 0);
    pthread_create(&b, 0, spin, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    double t2 = now();
    printf("one %.2fs two %.2fs ratio %.2f\n", t1 - t0, t2 - t1, (t2 - t1) / (t1 - t0));
}
