package io.meterstore.archiver.service;

import com.google.inject.Inject;
import io.airlift.node.NodeInfo;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;

import java.time.Instant;

import static io.airlift.units.Duration.nanosSince;
import static jakarta.ws.rs.core.MediaType.APPLICATION_JSON;
import static jakarta.ws.rs.core.MediaType.TEXT_PLAIN;
import static jakarta.ws.rs.core.Response.Status.BAD_REQUEST;
import static java.util.Objects.requireNonNull;

/** Liveness and readiness as Trino's {@code ServerInfoResource}: {@code /v1/info} and {@code /v1/info/state}. */
@Path("/v1/info")
public class ArchiverInfoResource
{
    private final String version;
    private final String environment;
    private final Instant startTime;
    private final long startNanos = System.nanoTime();
    private final ArchiverScheduler scheduler;
    private final ShutdownHandler shutdownHandler;

    @Inject
    public ArchiverInfoResource(ArchiverVersion version, NodeInfo nodeInfo, ArchiverScheduler scheduler, ShutdownHandler shutdownHandler)
    {
        this.version = requireNonNull(version, "version is null").toString();
        this.environment = nodeInfo.getEnvironment();
        this.startTime = Instant.ofEpochMilli(nodeInfo.getStartTime());
        this.scheduler = requireNonNull(scheduler, "scheduler is null");
        this.shutdownHandler = requireNonNull(shutdownHandler, "shutdownHandler is null");
    }

    @GET
    @Produces(APPLICATION_JSON)
    public ArchiverInfo getInfo()
    {
        return new ArchiverInfo(version, environment, startTime, nanosSince(startNanos), shutdownHandler.state(), scheduler.tableInfos());
    }

    @GET
    @Path("state")
    @Produces(APPLICATION_JSON)
    public ArchiverState getState()
    {
        return shutdownHandler.state();
    }

    /** {@code SHUTTING_DOWN} drains and ends the process; {@code ACTIVE} is accepted only while active. */
    @PUT
    @Path("state")
    @Consumes(APPLICATION_JSON)
    @Produces(TEXT_PLAIN)
    public Response updateState(ArchiverState state)
    {
        requireNonNull(state, "state is null");
        switch (state) {
            case SHUTTING_DOWN -> shutdownHandler.requestShutdown();
            case ACTIVE -> {
                if (shutdownHandler.state() != ArchiverState.ACTIVE) {
                    throw new WebApplicationException(Response.status(BAD_REQUEST)
                            .type(TEXT_PLAIN)
                            .entity("Cannot change the state from %s to %s: a shutdown cannot be cancelled".formatted(shutdownHandler.state(), state))
                            .build());
                }
            }
        }
        return Response.ok().build();
    }
}
